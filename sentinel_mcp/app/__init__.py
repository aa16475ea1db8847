"""The application floor: start-up wiring, the HTTP app and the CLI. Alone it knows every area."""
