"""Everyday lines that answer none of the questions the tests ask: a key's other memories."""

FILLER = [
    "the train was late again this morning",
    "my coffee went cold while I was on a call",
    "we should do a video call soon",
    "the weather has been grey all week",
    "finished the quarterly report at last",
    "my sister visited us in Porto in spring",
]
