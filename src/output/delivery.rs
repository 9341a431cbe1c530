//! How far handing an escalation or an approval request to a person got,
//! as `show`, `escalations` and `approvals` print it.

use super::At;
use crate::discussion::{Delivery, DeliveryState};
use serde::Serialize;

/// Whether a person has heard of an escalation (`escalations`).
#[derive(Serialize)]
pub(crate) struct DeliveryJson<'a> {
    pub state: &'static str,
    pub delivered_at: Option<At>,
    pub delivered_by: Option<&'a str>,
    pub failures: u32,
    pub last_failure: Option<&'a str>,
    pub retry_at: Option<At>,
    pub claimed_by: Option<&'a str>,
    pub lease_until: Option<At>,
}

impl<'a> DeliveryJson<'a> {
    /// How far handing an escalation or an approval request out got.
    pub(crate) fn of(d: &'a Delivery, now_ms: i64) -> DeliveryJson<'a> {
        let state = d.state(now_ms);
        let claim = d.claim.as_ref().filter(|_| state == DeliveryState::Claimed);
        DeliveryJson {
            state: state.as_str(),
            delivered_at: d.delivered.as_ref().map(|(at, _)| At(*at)),
            delivered_by: d.delivered.as_ref().map(|(_, by)| by.as_str()),
            failures: d.failures,
            last_failure: d.last_failure.as_deref(),
            retry_at: d
                .retry_at_ms
                .filter(|_| state == DeliveryState::Retrying)
                .map(At),
            claimed_by: claim.map(|c| c.by.as_str()),
            lease_until: claim.map(|c| At(c.lease_until_ms)),
        }
    }
}
