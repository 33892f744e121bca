"""The web inspector (/ui) in headless Chromium against the real service, and its routes without a browser."""
