"""A thirteenth probe of issue 31: a zip entry whose name is flagged UTF-8 (bit 11)
but is not UTF-8 made zipfile raise UnicodeDecodeError while reading the directory:
'error: 'utf-8' codec can't decode byte 0xff ...', exit 1, no file named (11 of
15,000 random byte flips of small zips). Now the damaged-zip line, exit 2."""

import os
import subprocess
import sys
import zipfile

ENV = {**os.environ, "PYTHONPATH": os.getcwd()}


def bad_name_zip(path):
    """text8 and a second entry 'xx', whose central-directory name becomes the bytes
    ff fe with the UTF-8 flag set."""
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("text8", "some text " * 10)
        zf.writestr("xx", "x")
    data = bytearray(path.read_bytes())
    at = data.find(b"PK\x01\x02", data.find(b"PK\x01\x02") + 4)  # the second entry
    data[at + 9] |= 0x08  # flags bit 11 (the high byte's 0x08): the name is UTF-8
    data[at + 46:at + 48] = b"\xff\xfe"  # ... and it is not
    path.write_bytes(bytes(data))


def test_a_zip_with_a_name_that_is_not_utf8_is_damaged(tmp_path):
    z = tmp_path / "badutf.zip"
    bad_name_zip(z)
    res = subprocess.run([sys.executable, "-m", "txl_mini", "data", "text8", "--path",
                          str(z), "--quiet"], env=ENV, text=True, capture_output=True,
                         timeout=300)
    assert res.returncode == 2, (res.returncode, res.stderr)
    assert res.stderr.count("\n") == 1 and "Traceback" not in res.stderr, res.stderr
    assert f"{z} is a damaged zip file (" in res.stderr, res.stderr
