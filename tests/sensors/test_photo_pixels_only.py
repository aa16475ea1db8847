"""A photo leaves the phone as pixels and nothing else. Its EXIF (GPS included) was dropped, but a JPEG
carries more: a comment (COM), XMP (which holds GPS tags as well), an ICC profile, maker segments. Pillow
copies the original's comment into the re-encoded photo, so a position a camera or app wrote there reached a
requester whose location consent is city-level or none. The re-encoded JPEG holds only the segments an image
needs (an allow list of markers), whatever the original carried. termux-camera-photo is a real subprocess
writing the JPEG."""

from __future__ import annotations

import base64
import shlex
import sys
from pathlib import Path

import pytest
from tests.sensors.test_termux_source import script
from tests.support.jpeg_segments import PIXEL_MARKERS, markers

from device_tools.sensors.sources.termux import TermuxSource
from sentinel_mcp.core.sensor_kinds import Scope, SensorKind

pytestmark = pytest.mark.timeout(60)
PY = shlex.quote(sys.executable)
WHERE = "GPS 37.774929,-122.419415"
XMP = ('<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">'
       '<rdf:Description xmlns:exif="http://ns.adobe.com/exif/1.0/" exif:GPSLatitude="37,46.495N" '
       'exif:GPSLongitude="122,25.165W"/></rdf:RDF></x:xmpmeta>')
# all a JPEG may carry besides its pixels, written where termux-camera-photo is told to (its last argument)
CAMERA = f"""for last; do :; done
{PY} - "$last" <<'PYEOF'
import sys
from PIL import Image
img = Image.new("RGB", (800, 600), (20, 120, 200))
exif = Image.Exif()
exif[0x8825] = {{1: "N", 2: (37.0, 46.0, 29.7)}}
exif[0x010E] = "{WHERE}"  # ImageDescription
img.save(sys.argv[1], format="JPEG", exif=exif.tobytes(), comment="{WHERE}".encode(), xmp={XMP!r}.encode(),
         icc_profile=b"{WHERE}" * 8)
PYEOF"""
async def test_a_photo_carries_its_pixels_only(tmp_path: Path, make_bridge):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script(bin_dir, "termux-camera-photo", CAMERA)
    bridge = make_bridge(TermuxSource(str(bin_dir), timeout=20))
    bridge.consents.grant("agent-a", SensorKind.camera, Scope.minimal)
    photo = (await bridge.handle({"sensor": "camera", "policy_tag": "look"}, "agent-a")).payload
    jpeg = base64.b64decode(photo["image_base64"])
    assert WHERE.encode() not in jpeg and b"GPSLatitude" not in jpeg and b"xmpmeta" not in jpeg
    assert set(markers(jpeg)) <= PIXEL_MARKERS, [hex(m) for m in markers(jpeg)]
    assert photo["width"] == 640 and photo["height"] == 480  # still the photo, downscaled
