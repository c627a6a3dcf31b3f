//! The dashboard (`delayq_dashboard`, `delayq dashboard`): handler tests
//! that call the router without a socket, and browser tests that drive
//! Debian's headless Chromium through chromedriver against a served
//! dashboard. Every test starts its own `redis-server`.
//!
//! A test binary of its own: the dashboard installs the process-wide
//! Prometheus recorder, and the integration tests install a debugging one.

use delayq_test_support::redis_server;

mod browser;
mod handlers;
mod seed;
