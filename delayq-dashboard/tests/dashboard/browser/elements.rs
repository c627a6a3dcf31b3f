//! Work on single pending elements in headless Chromium (issue 33 item 6).
