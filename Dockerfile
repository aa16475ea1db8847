# Sentinel over HTTPS (streamable HTTP at /mcp, legacy SSE at /sse, /healthz, /metrics, A2A).
#   docker build -t sentinel-mcp-gateway .
#   docker run -p 8765:8765 -v sentinel-state:/data sentinel-mcp-gateway
# Beyond loopback Sentinel serves TLS only: on first start --tls-local makes a local CA and a server certificate in
# /data/tls (clients trust /data/tls/ca.pem: `docker cp <container>:/data/tls/ca.pem .`). For the name clients use,
# add `--tls-name HOST` to the command on first start (or run `tls init --name HOST --force` once on the volume).
# Every HTTP caller needs a token or a client certificate (`docker exec <container> sentinel-mcp tls issue NAME`):
# the owner's token is generated into /data/http-token on first start (printed once in the log;
# `docker exec <container> sentinel-mcp config token` prints it again).
# With your own config (sentinel.http.token or principals, sentinel.http.allowed_hosts for the name clients use,
# sentinel.http.tls for certificates of your own, or --tls-local):
#   docker run -p 8765:8765 -v "$PWD/sentinel.json:/config/sentinel.json:ro" -v sentinel-state:/data \
#       sentinel-mcp-gateway -c /config/sentinel.json serve --http 0.0.0.0:8765 --tls-local

# ---- build the wheel (the same artifact pip, pipx and uvx install)
FROM python:3.11-slim-bookworm AS build
WORKDIR /src
COPY pyproject.toml setup.py README.md ./
COPY sentinel_mcp ./sentinel_mcp
COPY device_tools ./device_tools
COPY examples ./examples
COPY rulebases ./rulebases
COPY grammars ./grammars
RUN python -m pip wheel --no-deps --no-cache-dir -w /wheels .

# ---- run it: Debian with SWI-Prolog (the policy engine) and Tesseract (screen OCR) from apt
FROM python:3.11-slim-bookworm
LABEL io.modelcontextprotocol.server.name="io.github.sentinel-mcp/sentinel-mcp-gateway"
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends swi-prolog-nox tesseract-ocr \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /wheels /wheels
RUN python -m pip install --no-cache-dir /wheels/*.whl && rm -rf /wheels
# Sentinel's Prolog core precompiled by this stage's SWI-Prolog (the build stage has none), as root: the package
# stays writable by root only (docs/policy-engine.md, "Sentinel's own core, precompiled")
RUN python -m sentinel_mcp.policy.core_qlf
RUN useradd --create-home --uid 10001 sentinel && mkdir -p /data /state && chown sentinel /data /state \
    && chmod 700 /state
USER sentinel
# /state holds the audit anchor (key + anchors.log, outside the data dir): its own volume, so that it outlives
# the container and is not restored or shared with /data
ENV SENTINEL_DATA_DIR=/data XDG_STATE_HOME=/state PYTHONUNBUFFERED=1
VOLUME /data /state
EXPOSE 8765
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s \
    CMD python -c "import os, ssl, urllib.request; urllib.request.urlopen('https://127.0.0.1:8765/healthz', timeout=4, context=ssl.create_default_context(cafile=os.environ['SENTINEL_DATA_DIR'] + '/tls/ca.pem'))"
ENTRYPOINT ["sentinel-mcp"]
CMD ["serve", "--http", "0.0.0.0:8765", "--tls-local"]
