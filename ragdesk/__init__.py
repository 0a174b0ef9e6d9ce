"""ragdesk: find the right passage in your notes, see why it ranked, and paste it into a chat assistant."""

import os

__version__ = "0.1.0"

# onnxruntime (the meaning model's engine) writes a device id and a queue of telemetry events under
# ~/.cache/Microsoft/DeveloperTools in every process that loads it, unless this is set before it loads:
# nothing leaves this machine unasked (tests/app/test_footprint.py). Every entry point imports ragdesk first.
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
