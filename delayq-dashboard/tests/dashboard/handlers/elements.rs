//! Work on single pending elements through the router, without a browser (issue 33 item 6).
