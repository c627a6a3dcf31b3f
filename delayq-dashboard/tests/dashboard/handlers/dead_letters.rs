//! The queue page's dead letters through the router, without a browser (issue 33 item 5).
