"""TLS for Sentinel: the HTTP front's certificates and mutual TLS, the client side towards upstreams and A2A
peers, and a small local certificate authority (``sentinel-mcp tls``)."""
