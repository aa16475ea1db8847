# Sentinel over HTTP (streamable HTTP at /mcp, legacy SSE at /sse, /healthz, /metrics, A2A).
#   docker build -t sentinel-mcp-gateway .
#   docker run -p 8765:8765 -v sentinel-state:/data sentinel-mcp-gateway
# Every HTTP caller needs a token: the owner's is generated into /data/http-token on first start (printed once in
# the log; `docker exec <container> sentinel-mcp config token` prints it again).
# With your own config (sentinel.http.token or principals, and sentinel.http.allowed_hosts for the name clients use):
#   docker run -p 8765:8765 -v "$PWD/sentinel.json:/config/sentinel.json:ro" -v sentinel-state:/data \
#       sentinel-mcp-gateway -c /config/sentinel.json serve --http 0.0.0.0:8765

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
RUN useradd --create-home --uid 10001 sentinel && mkdir -p /data && chown sentinel /data
USER sentinel
ENV SENTINEL_DATA_DIR=/data PYTHONUNBUFFERED=1
VOLUME /data
EXPOSE 8765
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s \
    CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8765/healthz', timeout=4)"
ENTRYPOINT ["sentinel-mcp"]
CMD ["serve", "--http", "0.0.0.0:8765"]
