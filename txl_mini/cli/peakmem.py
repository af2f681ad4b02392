"""Peak memory of a stretch of code, for `python -m txl_mini bench`.

torch.cuda.max_memory_allocated on CUDA; on a CPU the process's peak resident set
(VmHWM, reset through /proc/self/clear_refs after malloc_trim at each `reset()`).
"rise" is the peak minus what was in use when the measurement began
(`PeakMemory.base`).
"""

from __future__ import annotations

import torch


class PeakMemory:
    """Peak memory of a stretch of code, in MiB: CUDA allocator peak, or peak RSS on a
    CPU."""

    def __init__(self, device: torch.device):
        self.device = device

    def reset(self) -> None:
        if self.device.type == "cpu":
            # hand freed memory back first, so that RSS is what is in use
            _malloc_trim()
        # what was already in use: peak - base is this stretch's rise
        self.base = self._now()
        if self.device.type == "cuda":
            torch.cuda.reset_peak_memory_stats(self.device)
        else:
            try:
                with open("/proc/self/clear_refs", "w") as f:
                    f.write("5")  # resets VmHWM to the current RSS (Linux)
            except OSError:
                pass

    def _status(self, field: str) -> float:
        try:
            with open("/proc/self/status") as f:
                for line in f:
                    if line.startswith(field):
                        return int(line.split()[1]) / 1024
        except OSError:
            pass
        return float("nan")

    def _now(self) -> float:
        if self.device.type == "cuda":
            return torch.cuda.memory_allocated(self.device) / 2**20
        return self._status("VmRSS:")

    def peak_mib(self) -> float:
        if self.device.type == "cuda":
            return torch.cuda.max_memory_allocated(self.device) / 2**20
        return self._status("VmHWM:")


def _malloc_trim() -> None:
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass  # not glibc: the RSS peaks then include freed memory the allocator kept
