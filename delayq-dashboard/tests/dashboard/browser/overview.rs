//! The overview and the queue page's header and charts in headless Chromium (issue 33 items 7, 9, 10).
