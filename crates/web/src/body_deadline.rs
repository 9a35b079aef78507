//! A deadline on a request's body: a client that sends its headers and then stops would
//! otherwise hold a connection and a handler for as long as it likes. The deadline is on
//! each wait, not on the whole body, so a large trace upload over a slow forwarded port
//! is not cut off while it is still arriving.

use axum::body::{Body, Bytes};
use http_body::{Frame, SizeHint};
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

/// How long a request's body may go without any of it arriving.
pub const BODY_DEADLINE: Duration = Duration::from_secs(30);

/// The error a late body ends with; `Display` is the message the client gets.
#[derive(Debug)]
pub struct BodyLate;

impl std::fmt::Display for BodyLate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the request body stopped arriving: nothing came for {} s",
            BODY_DEADLINE.as_secs()
        )
    }
}

impl std::error::Error for BodyLate {}

/// `inner`, ending with [`BodyLate`] once nothing of it has come for `within`.
pub struct DeadlineBody {
    inner: Body,
    within: Duration,
    deadline: Pin<Box<tokio::time::Sleep>>,
}

impl DeadlineBody {
    pub fn wrap(inner: Body, within: Duration) -> Body {
        let deadline = Box::pin(tokio::time::sleep(within));
        Body::new(DeadlineBody { inner, within, deadline })
    }
}

impl http_body::Body for DeadlineBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let this = self.get_mut();
        // What has arrived is taken first, and gives the rest another `within`: only a
        // body that has stopped coming is cut off.
        if let Poll::Ready(frame) = Pin::new(&mut this.inner).poll_frame(cx) {
            let next = tokio::time::Instant::now() + this.within;
            this.deadline.as_mut().reset(next);
            return Poll::Ready(frame);
        }
        match this.deadline.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Some(Err(axum::Error::new(BodyLate)))),
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
