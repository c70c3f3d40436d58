"""How GitHub requests are retried: how often, and how long between attempts."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long a retried request is tried again (what is retried is fixed)."""

    attempts: int = 5
    base_delay_s: float = 2.0
    max_delay_s: float = 30.0
    """Also the longest Retry-After that is waited for."""
    timeout_s: float = 60.0

    def backoff_s(self, attempt: int) -> float:
        return min(self.max_delay_s, self.base_delay_s * 2.0 ** (attempt - 1))
