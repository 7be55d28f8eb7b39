"""The HTTP edge: FastAPI app, auth, error mapping and routes."""
