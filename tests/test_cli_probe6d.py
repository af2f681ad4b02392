"""Issue 31, sixth probe (d): bench's --long-segments had no upper bound; 10**9 ran
on silently (a month, at the rate a probe saw). Real subprocess; failed before."""

from test_cli_faults import one_line, txl


def test_bench_refuses_long_segments_beyond_its_bound():
    res = txl("bench", "--long-segments", 10**9, "--quiet")
    line = one_line(res, 2)
    assert line == ("python -m txl_mini bench: error: --long-segments must be <= "
                    "100,000 (minutes of evaluation; the memory is flat after 2), "
                    "got 1,000,000,000")
    assert res.stdout == ""  # refused before the first measurement
