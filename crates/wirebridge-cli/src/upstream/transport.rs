//! The byte stream under an upstream connection, as the pool keeps it
//! between exchanges.

use hyper::rt::{Read, Write};

/// A byte stream that connections to the upstream run on, and that the pool
/// keeps between exchanges.
pub trait Transport: Read + Write + Unpin + Send + 'static {}

impl<T: Read + Write + Unpin + Send + 'static> Transport for T {}
