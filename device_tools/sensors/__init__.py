"""Device sensors behind policy (the on-device agent design's SensorBridge), as the ``sensors`` built-in.

- ``messages``: SensorRequest / SensorResponse (shared with the A2A participant)
- ``sources``: simulated (default), adb (dumpsys via adbutils), Termux (termux-api CLIs)
- ``parsers``: dumpsys location/battery/sensorservice and termux JSON, with the known caveats
- ``bridge``: consent -> scope -> rate limit -> retention -> audit, on SQLite in the built-in's data dir
- ``server``: the MCP tools (sensor_list, sensor_read, sensor_consent, sensor_retained); ``cli``:
``sentinel-mcp sensors``
"""
