"""The front's CA bundle and CRL are read from the descriptor the trust rule judged, not looked at by name and
then opened again (``server_context._read``): a file put in place between the look (``_readable``) and the
read, one another account may write, is refused rather than trusted. The window is made certain here by
swapping the file right after the look. Before, the bytes read were whatever the name held by then."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from sentinel_mcp.tls import server_context
from sentinel_mcp.tls.server_context import FrontTLS, ServerContexts, TLSSetupError
from tests.tls.conftest import Pki


@pytest.mark.parametrize("which", ["ca", "crl"])
def test_a_file_swapped_after_the_look_is_not_read(pki: Pki, which: str, monkeypatch) -> None:
    tls = FrontTLS(pki.server.cert, pki.server.key, pki.ca.ca_cert_path, pki.ca.crl_path, "required")
    ServerContexts(tls)
    target: Path = getattr(tls, which)
    looked = server_context._readable

    def look_then_swap(path: Path, what: str) -> None:
        looked(path, what)
        if path == target:  # the same bytes, now in a file anybody may rewrite
            swapped = path.with_name(".swapped")
            shutil.copy(path, swapped)
            swapped.chmod(0o666)
            os.replace(swapped, path)

    monkeypatch.setattr(server_context, "_readable", look_then_swap)
    with pytest.raises(TLSSetupError, match="may be written by group or others"):
        ServerContexts(tls)
