//! [`DemoService`]: the demo upstream as a service, both a
//! [`tower::Service`] and a [`hyper::service::Service`], over any request
//! body type.

use crate::body::DemoBody;
use crate::config::DemoConfig;
use crate::handler::handle;
use http::{Request, Response};
use http_body::Body;
use std::convert::Infallible;
use std::error::Error as StdError;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

/// The future of [`DemoService`]: it never fails (errors are HTTP responses).
pub type DemoFuture =
    Pin<Box<dyn Future<Output = Result<Response<DemoBody>, Infallible>> + Send + 'static>>;

/// The demo upstream as a service. Cheap to clone (the configuration is
/// shared). Use it with hyper's connection builders, as the inner service of
/// a tower stack, or call it in-process without a socket.
#[derive(Debug, Clone)]
pub struct DemoService {
    config: Arc<DemoConfig>,
}

/// A [`DemoService`] for this configuration.
pub fn service(config: Arc<DemoConfig>) -> DemoService {
    DemoService { config }
}

impl DemoService {
    /// The configuration it serves with.
    pub fn config(&self) -> &DemoConfig {
        &self.config
    }

    fn respond<B>(&self, req: Request<B>) -> DemoFuture
    where
        B: Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<Box<dyn StdError + Send + Sync>>,
    {
        let config = Arc::clone(&self.config);
        Box::pin(async move { Ok(handle(&config, req).await) })
    }
}

impl<B> tower::Service<Request<B>> for DemoService
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn StdError + Send + Sync>>,
{
    type Response = Response<DemoBody>;
    type Error = Infallible;
    type Future = DemoFuture;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        self.respond(req)
    }
}

impl<B> hyper::service::Service<Request<B>> for DemoService
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn StdError + Send + Sync>>,
{
    type Response = Response<DemoBody>;
    type Error = Infallible;
    type Future = DemoFuture;

    fn call(&self, req: Request<B>) -> Self::Future {
        self.respond(req)
    }
}
