"""Camera and microphone through termux-api (recorded as small scripts: a phone cannot exist here), behind the
bridge's consent like every sensor; the photo is downscaled and re-encoded (its EXIF, GPS included, stays
behind); temporary files are gone afterwards and a recording is always stopped."""

from __future__ import annotations

import base64
import io
import shlex
import sys
from pathlib import Path

import pytest
from PIL import Image
from tests.sensors.test_termux_source import calls, script

from device_tools.sensors.errors import ConsentRequired, NoReading
from sentinel_mcp.core.sensor_kinds import Scope, SensorKind
from device_tools.sensors.sources.termux import TermuxSource

pytestmark = pytest.mark.timeout(60)
PY = shlex.quote(sys.executable)
# a 1600x1200 JPEG with an EXIF GPS block, written where termux-camera-photo is told to (its last argument)
CAMERA = f"""for last; do :; done
{PY} - "$last" <<'PYEOF'
import sys
from PIL import Image
img = Image.new("RGB", (1600, 1200), (200, 30, 30))
exif = Image.Exif()
exif[0x8825] = {{1: "N", 2: (37.0, 46.0, 29.7)}}
img.save(sys.argv[1], format="JPEG", exif=exif.tobytes())
PYEOF"""
MICROPHONE = """case "$1" in
  -f) printf 'ftypM4A fake aac frames' > "$2"; echo "Recording started: $2" ;;
  -q) echo "Recording finished" ;;
esac"""


@pytest.fixture
def media(tmp_path: Path) -> Path:
    b = tmp_path / "bin"
    b.mkdir()
    script(b, "termux-camera-photo", CAMERA)
    script(b, "termux-microphone-record", MICROPHONE)
    return b


async def test_camera_and_microphone_need_consent_then_read(media, make_bridge):
    source = TermuxSource(str(media), timeout=20)
    source.record_seconds = 1
    assert {SensorKind.camera, SensorKind.microphone} <= await source.available()
    bridge = make_bridge(source)
    for sensor in ("camera", "microphone"):
        with pytest.raises(ConsentRequired):
            await bridge.handle({"sensor": sensor, "policy_tag": "look"}, "agent-a")
    assert calls(media) == []  # no consent: the camera and the microphone were never touched
    bridge.consents.grant("agent-a", SensorKind.camera, Scope.minimal)
    bridge.consents.grant("agent-a", SensorKind.microphone, Scope.minimal)
    photo = (await bridge.handle({"sensor": "camera", "policy_tag": "look"}, "agent-a")).payload
    clip = (await bridge.handle({"sensor": "microphone", "policy_tag": "listen"}, "agent-a")).payload
    image = Image.open(io.BytesIO(base64.b64decode(photo["image_base64"])))
    assert (
        image.size == (640, 480)
        and photo["original_size"] == [1600, 1200]
        and photo["mime_type"] == "image/jpeg"
    )
    assert 0x8825 not in image.getexif()  # no GPS tag leaves the phone
    assert base64.b64decode(clip["audio_base64"]) == b"ftypM4A fake aac frames" and clip["seconds"] == 1
    log = calls(media)
    assert log[-1] == "termux-microphone-record -q"  # always stopped
    photo_path = Path(next(line for line in log if line.startswith("termux-camera-photo")).split()[-1])
    clip_path = Path(next(line for line in log if " -f " in line).split()[2])
    assert not photo_path.parent.exists() and not clip_path.parent.exists()  # temporary files are gone


async def test_a_camera_that_writes_nothing_is_no_reading(tmp_path):
    b = tmp_path / "bin"
    b.mkdir()
    script(b, "termux-camera-photo", 'echo \'{"API_ERROR": "No camera permission"}\'')
    with pytest.raises(NoReading, match="Termux:API reported an error"):
        await TermuxSource(str(b), timeout=10).read(SensorKind.camera)
