"""The web console (``/console`` on ``serve --http``): inbox, activity, sessions and facts, policy and what-if
replay, upstreams and consents. Server-rendered (Starlette + Jinja2), live updates over SSE."""
