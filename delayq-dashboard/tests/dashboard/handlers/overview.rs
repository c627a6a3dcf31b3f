//! The overview and the queue page's header and charts through the router, without a browser (issue 33 items 7, 9, 10).
