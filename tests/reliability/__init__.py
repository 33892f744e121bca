"""Reliability of the real service process: crash consistency under SIGKILL, and concurrent clients."""
