"""The service: the `Memory` facade, the wiring of its parts, and its workers."""

from memroute.service.facade import Memory

__all__ = ["Memory"]
