"""The names of the threads that admit chats, light to import: `memroute serve` holds them to
a CPU (`memroute/web/cpu_pinning.py`) without loading the chat pipeline first."""

CHAT_THREAD_PREFIX = "memroute-chat"
