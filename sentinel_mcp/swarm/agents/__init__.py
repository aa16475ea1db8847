"""The four agents: each builds its prompt and parses its model's reply into a pydantic model."""
