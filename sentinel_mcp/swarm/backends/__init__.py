"""Model backends behind one interface (``ModelBackend``), chosen by config: local, openai, sampling."""
