"""Ring 0 data: the records memroute stores and returns (`records`), the typed reports
of the facade (`results`) and of the engine status (`status`), and the one JSON form
they all go out in (`wire`)."""
