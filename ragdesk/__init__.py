"""ragdesk: find the right passage in your notes, see why it ranked, and paste it into a chat assistant."""

__version__ = "0.1.0"
