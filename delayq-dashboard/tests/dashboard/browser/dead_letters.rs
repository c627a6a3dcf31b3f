//! The queue page's dead letters in headless Chromium (issue 33 item 5).
