"""The OpenAI-compatible gateway: upstream calls, SSE relay and the chat pipeline."""
