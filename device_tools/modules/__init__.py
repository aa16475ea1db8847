"""Tool modules of the device server: calendar, clock, contacts, messaging, notes, terminal."""
