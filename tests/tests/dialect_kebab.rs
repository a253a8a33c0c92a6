//! The two kebab-case drafts, compiled by the macro and run: switch choices of every form with
//! every operator on real data, delays in seconds and in ISO 8601 (paused time), retries that
//! hand over to their `next-state` once spent, parallel states whose output is the array of
//! their branches' outputs, EVENT states whose entries wait for event expressions over
//! correlated triggers (each entry with its filter, timeout and `next-state`), and END states
//! whose status is the run's.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use swf_runtime::{FunctionError, Value, json};
use tokio::time::Instant;

// The file keeps a `next-state` on a state marked `end: true` (as the schema requires): the
// macro reports W0001 as a deprecation warning, expected here.
#[allow(deprecated)]
mod second_route {
    swf_runtime::workflow!("workflows/kebab/second-route.sw.yaml");
}
mod second_flow {
    swf_runtime::workflow!("workflows/kebab/second-flow.sw.yaml");
}
mod first_route {
    swf_runtime::workflow!("workflows/kebab/first-route.sw.yaml");
}
mod first_flow {
    swf_runtime::workflow!("workflows/kebab/first-flow.sw.yaml");
}

use first_flow::FirstFlowWorkflow;
use first_route::FirstRouteWorkflow;
use second_flow::SecondFlowWorkflow;
use second_route::SecondRouteWorkflow;

// ---------------------------------------------------------------------------------------------
// Switch choices

/// `mark` returns its arguments, so the route a run took is in its output.
struct Echo;

impl second_route::SecondRouteFunctions for Echo {
    async fn mark(&self, args: Value) -> Result<Value, FunctionError> {
        Ok(args)
    }
}

impl first_route::FirstRouteFunctions for Echo {
    async fn mark(&self, args: Value) -> Result<Value, FunctionError> {
        Ok(args)
    }
}

#[tokio::test]
async fn second_draft_choices_on_numbers_and_strings() {
    let cases = [
        // `StrGT`: "95" > "9" as text.
        (json!({"n": 95}), "StrGreater"),
        // "10" < "9" as text; as numbers every comparison of the `and` holds.
        (json!({"n": 10}), "Numbers"),
        (json!({"n": 10.0}), "Numbers"),
        // A string "10" compares as text: "10" > "9" fails, and `or` and `not` decide.
        (json!({"n": "10"}), "Neither"),
        (json!({"s": "b"}), "Strings"),
        (json!({"s": "ba"}), "Neither"),
        (json!({"legacy": 7}), "Legacy"),
        (json!({"legacy": 4}), "Neither"),
        (json!({"n": 150}), "Either"),
        (json!({"s": "z"}), "Either"),
        // `not` fails once one of its comparisons holds.
        (json!({"n": -1}), "Otherwise"),
        (json!({"s": "A"}), "Otherwise"),
    ];
    for (input, route) in cases {
        let output = SecondRouteWorkflow::new(Echo)
            .run(input.clone())
            .await
            .unwrap_or_else(|e| panic!("{input}: {e}"));
        let mut expected = input.clone();
        expected["route"] = json!(route);
        assert_eq!(output, expected, "{input}");
    }
}

#[tokio::test]
async fn first_draft_conditions_nest() {
    let cases = [
        (json!({"n": 10}), "Ten"),
        (json!({"n": 50}), "Small"),
        (json!({"n": 5000}), "BigOrEarly"),
        (json!({"n": 50, "s": "b"}), "BigOrEarly"),
        // `not (s == a or n < 0)` fails: the last choice takes it.
        (json!({"n": 50, "s": "a"}), "Small"),
        (json!({"n": -3, "s": "b"}), "Small"),
        (json!({"n": -10, "s": "b"}), "Other"),
        // A string "50" compares as text: not <= "100", but >= "1000".
        (json!({"n": "50"}), "BigOrEarly"),
    ];
    for (input, route) in cases {
        let output = FirstRouteWorkflow::new(Echo)
            .run(input.clone())
            .await
            .unwrap_or_else(|e| panic!("{input}: {e}"));
        let mut expected = input.clone();
        expected["route"] = json!(route);
        assert_eq!(output, expected, "{input}");
    }
}

// ---------------------------------------------------------------------------------------------
// Delays, retries, parallel states

/// Functions that record when they were called; `charge` declines a set number of times.
struct Shop {
    epoch: Instant,
    declines: AtomicU32,
    charge_takes: Duration,
    calls: Mutex<Vec<(&'static str, Value, u64)>>,
}

impl Shop {
    fn new(declines: u32) -> Self {
        Shop {
            epoch: Instant::now(),
            declines: AtomicU32::new(declines),
            charge_takes: Duration::ZERO,
            calls: Mutex::new(Vec::new()),
        }
    }

    fn record(&self, function: &'static str, args: Value) {
        let at = self.epoch.elapsed().as_secs();
        self.calls.lock().unwrap().push((function, args, at));
    }

    /// When each call of `function` started, in whole seconds.
    fn times_of(&self, function: &str) -> Vec<u64> {
        let calls = self.calls.lock().unwrap();
        calls
            .iter()
            .filter(|c| c.0 == function)
            .map(|c| c.2)
            .collect()
    }

    fn args_of(&self, function: &str) -> Vec<Value> {
        let calls = self.calls.lock().unwrap();
        calls
            .iter()
            .filter(|c| c.0 == function)
            .map(|c| c.1.clone())
            .collect()
    }

    async fn charge(&self, args: Value) -> Result<Value, FunctionError> {
        self.record("charge", args);
        tokio::time::sleep(self.charge_takes).await;
        let declined = self
            .declines
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok();
        if declined {
            return Err(FunctionError::named("CardDeclined", "insufficient funds"));
        }
        Ok(json!({"id": "p1"}))
    }

    async fn receipt(&self, args: Value) -> Result<Value, FunctionError> {
        self.record("receipt", args);
        tokio::time::sleep(Duration::from_secs(2)).await;
        Ok(json!({"receipt": "r1"}))
    }

    async fn ship(&self, args: Value) -> Result<Value, FunctionError> {
        self.record("ship", args);
        Ok(json!({"shipped": true}))
    }

    async fn notify(&self, args: Value) -> Result<Value, FunctionError> {
        self.record("notify", args.clone());
        Ok(json!({"notified": args["reason"]}))
    }
}

impl second_flow::SecondFlowFunctions for Shop {
    async fn charge(&self, args: Value) -> Result<Value, FunctionError> {
        Shop::charge(self, args).await
    }
    async fn receipt(&self, args: Value) -> Result<Value, FunctionError> {
        Shop::receipt(self, args).await
    }
    async fn ship(&self, args: Value) -> Result<Value, FunctionError> {
        Shop::ship(self, args).await
    }
    async fn notify(&self, args: Value) -> Result<Value, FunctionError> {
        Shop::notify(self, args).await
    }
}

impl first_flow::FirstFlowFunctions for Shop {
    async fn charge(&self, args: Value) -> Result<Value, FunctionError> {
        Shop::charge(self, args).await
    }
    async fn receipt(&self, args: Value) -> Result<Value, FunctionError> {
        Shop::receipt(self, args).await
    }
    async fn ship(&self, args: Value) -> Result<Value, FunctionError> {
        Shop::ship(self, args).await
    }
    async fn notify(&self, args: Value) -> Result<Value, FunctionError> {
        Shop::notify(self, args).await
    }
}

/// What each branch outputs when the charge went through: its copy of the data, with its own
/// result merged in.
fn branch_outputs() -> Value {
    let paid = json!({"amount": 5, "payment": {"id": "p1"}});
    let mut receipt = paid.clone();
    receipt["receipt"] = json!("r1");
    let mut shipping = paid;
    shipping["shipped"] = json!(true);
    json!([receipt, shipping])
}

#[tokio::test(start_paused = true)]
async fn second_draft_delay_retry_and_parallel_array() {
    let shop = Shop::new(2);
    let workflow = SecondFlowWorkflow::new(shop);
    let started = Instant::now();
    let output = workflow.run(json!({"amount": 5})).await.unwrap();
    // PT1M, then two declines 10 s apart, then the slower branch's PT5S.
    assert_eq!(started.elapsed(), Duration::from_secs(60 + 20 + 5));
    let shop = workflow.functions();
    assert_eq!(shop.times_of("charge"), [60, 70, 80]);
    assert_eq!(shop.args_of("charge")[0], json!({"amount": 5}));
    // Both branches start together; the output array is in branch order, not finishing order.
    assert_eq!(shop.times_of("receipt"), [80]);
    assert_eq!(shop.times_of("ship"), [85]);
    assert_eq!(output, branch_outputs());
    assert!(shop.times_of("notify").is_empty());
}

#[tokio::test(start_paused = true)]
async fn second_draft_spent_retries_take_their_next_state() {
    let workflow = SecondFlowWorkflow::new(Shop::new(u32::MAX));
    let output = workflow.run(json!({"amount": 5})).await.unwrap();
    let shop = workflow.functions();
    // `R3/PT10S`: three retries, ten seconds apart; then the retry's `next-state`.
    assert_eq!(shop.times_of("charge"), [60, 70, 80, 90]);
    assert_eq!(shop.times_of("notify"), [90]);
    assert_eq!(shop.args_of("notify"), [json!({"reason": "CardDeclined"})]);
    assert_eq!(output["notified"], json!("CardDeclined"));
    assert_eq!(output["error"]["name"], json!("CardDeclined"));
    assert!(shop.times_of("receipt").is_empty());
}

#[tokio::test(start_paused = true)]
async fn second_draft_action_timeout_is_not_the_retried_error() {
    let mut shop = Shop::new(0);
    shop.charge_takes = Duration::from_secs(31);
    let workflow = SecondFlowWorkflow::new(shop);
    let error = workflow.run(json!({"amount": 5})).await.unwrap_err();
    assert_eq!(error.task(), "Charge");
    assert_eq!(error.error().name, "TimeoutError");
    assert_eq!(workflow.functions().times_of("charge"), [60]);
}

#[tokio::test(start_paused = true)]
async fn first_draft_delay_retry_and_parallel_array() {
    let workflow = FirstFlowWorkflow::new(Shop::new(1));
    let started = Instant::now();
    let output = workflow.run(json!({"amount": 5})).await.unwrap();
    // 60 s, one decline and a retry 10 s later, then the 5 s branch.
    assert_eq!(started.elapsed(), Duration::from_secs(60 + 10 + 5));
    let shop = workflow.functions();
    assert_eq!(shop.times_of("charge"), [60, 70]);
    assert_eq!(shop.times_of("ship"), [75]);
    assert_eq!(output, branch_outputs());
}

#[tokio::test(start_paused = true)]
async fn first_draft_spent_retries_take_their_next_state() {
    let workflow = FirstFlowWorkflow::new(Shop::new(u32::MAX));
    // `Failed` is an END state with status FAILURE.
    let error = workflow.run(json!({"amount": 5})).await.unwrap_err();
    assert_eq!(error.task(), "Failed");
    assert_eq!(error.error().name, "EndStateFailure");
    assert_eq!(error.data()["notified"], json!("CardDeclined"));
    let shop = workflow.functions();
    // `max-retry: 2`, `retry-interval: 10` (seconds).
    assert_eq!(shop.times_of("charge"), [60, 70, 80]);
    assert_eq!(shop.args_of("notify"), [json!({"reason": "CardDeclined"})]);
    assert_eq!(shop.times_of("notify"), [80]);
}

// ---------------------------------------------------------------------------------------------
// The representative workflows: EVENT states over event expressions, END states

// W0001 expected, as for `second_route`.
#[allow(deprecated)]
mod second_auction {
    swf_runtime::workflow!("workflows/kebab/second.sw.yaml");
}
mod first_auction {
    swf_runtime::workflow!("workflows/kebab/first.sw.yaml");
}

use first_auction::{CarAuctionEvent, CarAuctionWorkflow};
use second_auction::{AuctionEvent, AuctionWorkflow};
use swf_runtime::{CloudEvent, ExecStatus, Io};

const MINUTE: Duration = Duration::from_secs(60);

/// The auction house's functions, recording each call.
struct House {
    epoch: Instant,
    declines: AtomicU32,
    calls: Mutex<Vec<(&'static str, Value, u64)>>,
}

impl House {
    fn new(declines: u32) -> Self {
        House {
            epoch: Instant::now(),
            declines: AtomicU32::new(declines),
            calls: Mutex::new(Vec::new()),
        }
    }

    fn record(&self, function: &'static str, args: Value) {
        let at = self.epoch.elapsed().as_secs();
        self.calls.lock().unwrap().push((function, args, at));
    }

    /// `(function, args)` of every call, in order.
    fn calls(&self) -> Vec<(&'static str, Value)> {
        let calls = self.calls.lock().unwrap();
        calls.iter().map(|c| (c.0, c.1.clone())).collect()
    }

    fn times_of(&self, function: &str) -> Vec<u64> {
        let calls = self.calls.lock().unwrap();
        calls
            .iter()
            .filter(|c| c.0 == function)
            .map(|c| c.2)
            .collect()
    }

    async fn record_bid(&self, args: Value) -> Result<Value, FunctionError> {
        self.record("recordBid", args);
        Ok(json!({"ok": true, "receipt": "R-1"}))
    }

    async fn charge(&self, args: Value) -> Result<Value, FunctionError> {
        self.record("charge", args);
        let declined = self
            .declines
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok();
        if declined {
            return Err(FunctionError::named("CardDeclined", "insufficient funds"));
        }
        Ok(json!({"id": "p1"}))
    }

    async fn register(&self, args: Value) -> Result<Value, FunctionError> {
        self.record("register", args);
        Ok(json!({"registered": true}))
    }

    async fn ship(&self, args: Value) -> Result<Value, FunctionError> {
        self.record("ship", args);
        Ok(json!({"shipped": true}))
    }

    async fn notify(&self, args: Value) -> Result<Value, FunctionError> {
        self.record("notify", args.clone());
        Ok(json!({"notified": [args["about"]]}))
    }
}

impl second_auction::AuctionFunctions for House {
    async fn record_bid(&self, args: Value) -> Result<Value, FunctionError> {
        House::record_bid(self, args).await
    }
    async fn charge(&self, args: Value) -> Result<Value, FunctionError> {
        House::charge(self, args).await
    }
    async fn register(&self, args: Value) -> Result<Value, FunctionError> {
        House::register(self, args).await
    }
    async fn ship(&self, args: Value) -> Result<Value, FunctionError> {
        House::ship(self, args).await
    }
    async fn notify(&self, args: Value) -> Result<Value, FunctionError> {
        House::notify(self, args).await
    }
}

impl first_auction::CarAuctionFunctions for House {
    async fn record_bid(&self, args: Value) -> Result<Value, FunctionError> {
        House::record_bid(self, args).await
    }
    async fn charge(&self, args: Value) -> Result<Value, FunctionError> {
        House::charge(self, args).await
    }
    async fn register(&self, args: Value) -> Result<Value, FunctionError> {
        House::register(self, args).await
    }
    async fn ship(&self, args: Value) -> Result<Value, FunctionError> {
        House::ship(self, args).await
    }
    async fn notify(&self, args: Value) -> Result<Value, FunctionError> {
        House::notify(self, args).await
    }
}

/// Delivers `event` to `io` after `after` of virtual time.
fn deliver_after(io: &Io, after: Duration, event: CloudEvent) {
    let io = io.clone();
    tokio::spawn(async move {
        tokio::time::sleep(after).await;
        io.deliver(event).await.unwrap();
    });
}

fn bid(amount: u64, currency: &str) -> Value {
    json!({"bid": {"amount": amount, "currency": currency, "bidder": "Ann"}})
}

/// Second draft: a bid and the close of its auction; the auction id correlates them.
fn second_events(io: &Io, auction: &str, bid_data: Value) {
    let placed = AuctionEvent::BidPlaced.correlated("b1", auction, bid_data);
    deliver_after(io, MINUTE, placed.unwrap());
    let closed = AuctionEvent::AuctionClosed.correlated("c1", auction, json!({"closedAt": "noon"}));
    deliver_after(io, 2 * MINUTE, closed.unwrap());
}

/// What a sold car's branches start from: the events' data, the recorded receipt (the action's
/// `output-path` and `result-path`) and the payment (`result-path`).
fn sold(bid_data: Value) -> Value {
    let mut data = bid_data;
    data["closedAt"] = json!("noon");
    data["recorded"] = json!("R-1");
    data["payment"] = json!({"id": "p1"});
    data
}

/// The events' data merged, the action's result filtered, the switch's `and` choice, the
/// charge, and the parallel state's array of branch outputs, in branch order.
#[tokio::test(start_paused = true)]
async fn second_draft_sells_to_a_bid_once_the_auction_closes() {
    let workflow = AuctionWorkflow::new(House::new(0));
    let io = Io::standalone();
    second_events(&io, "a1", bid(6000, "EUR"));
    let started = Instant::now();
    let result = workflow.run_with(json!({}), &io).await;
    assert_eq!(started.elapsed(), 2 * MINUTE);
    assert_eq!(ExecStatus::of(&result), ExecStatus::Success);
    let data = sold(bid(6000, "EUR"));
    let mut paperwork = data.clone();
    paperwork["registered"] = json!(true);
    let mut transport = data;
    transport["shipped"] = json!(true);
    transport["notified"] = json!(["shipping"]);
    assert_eq!(result.unwrap(), json!([paperwork, transport]));
    let calls = workflow.functions().calls();
    assert_eq!(calls[0], ("recordBid", bid(6000, "EUR")));
    assert_eq!(calls[1], ("charge", json!({"amount": 6000})));
}

/// Events of another auction never reach an instance bound to this one.
#[tokio::test(start_paused = true)]
async fn second_draft_correlates_events_by_auction() {
    let workflow = AuctionWorkflow::new(House::new(0));
    let io = Io::standalone();
    second_events(&io, "a1", bid(6000, "EUR"));
    let other = AuctionEvent::AuctionClosed.correlated("c0", "a2", json!({"closedAt": "dawn"}));
    deliver_after(&io, MINUTE + Duration::from_secs(30), other.unwrap());
    let result = workflow.run_with(json!({}), &io).await.unwrap();
    assert_eq!(result[0]["closedAt"], json!("noon"));
}

/// The `or` choice: a bid in dollars waits in DELAY `PT1M` before the charge.
#[tokio::test(start_paused = true)]
async fn second_draft_converts_other_currencies_first() {
    let workflow = AuctionWorkflow::new(House::new(0));
    let io = Io::standalone();
    second_events(&io, "a1", bid(6000, "USD"));
    let started = Instant::now();
    workflow.run_with(json!({}), &io).await.unwrap();
    assert_eq!(started.elapsed(), 3 * MINUTE);
    assert_eq!(workflow.functions().times_of("charge"), [180]);
}

/// The `single` choice (`LT`): a low bid cancels; the `not` choice: a bid without a bidder too.
#[tokio::test(start_paused = true)]
async fn second_draft_cancels_low_or_anonymous_bids() {
    for bid_data in [
        bid(500, "EUR"),
        json!({"bid": {"amount": 3000, "currency": "CHF"}}),
    ] {
        let workflow = AuctionWorkflow::new(House::new(0));
        let io = Io::standalone();
        second_events(&io, "a1", bid_data.clone());
        let output = workflow.run_with(json!({}), &io).await.unwrap();
        assert_eq!(output["notified"], json!(["cancelled"]), "{bid_data}");
        assert!(workflow.functions().times_of("charge").is_empty());
    }
    // Neither: the default charges.
    let workflow = AuctionWorkflow::new(House::new(0));
    let io = Io::standalone();
    second_events(&io, "a1", bid(3000, "CHF"));
    let output = workflow.run_with(json!({}), &io).await.unwrap();
    assert!(output.is_array(), "{output}");
}

/// The second entry: a cancellation's reason is selected from its data and placed; no action.
#[tokio::test(start_paused = true)]
async fn second_draft_cancellation_event() {
    let workflow = AuctionWorkflow::new(House::new(0));
    let io = Io::standalone();
    let cancelled = AuctionEvent::AuctionCancelled.correlated(
        "x1",
        "a1",
        json!({"reason": "withdrawn", "by": "seller"}),
    );
    deliver_after(&io, 30 * MINUTE, cancelled.unwrap());
    let started = Instant::now();
    let output = workflow.run_with(json!({"lot": 7}), &io).await.unwrap();
    assert_eq!(started.elapsed(), 30 * MINUTE);
    assert_eq!(
        output,
        json!({"lot": 7, "cancellation": {"reason": "withdrawn"}, "notified": ["cancelled"]})
    );
    assert_eq!(
        workflow.functions().calls(),
        [("notify", json!({"about": "cancelled"}))]
    );
}

/// Nothing within the second entry's `timeout: PT2H`: its `next-state`, without actions.
#[tokio::test(start_paused = true)]
async fn second_draft_entry_timeout() {
    let workflow = AuctionWorkflow::new(House::new(0));
    let io = Io::standalone();
    let placed = AuctionEvent::BidPlaced.correlated("b1", "a1", bid(6000, "EUR"));
    deliver_after(&io, MINUTE, placed.unwrap());
    let started = Instant::now();
    let output = workflow.run_with(json!({"lot": 7}), &io).await.unwrap();
    assert_eq!(started.elapsed(), 120 * MINUTE);
    assert_eq!(output, json!({"lot": 7, "notified": ["cancelled"]}));
    assert!(workflow.functions().times_of("recordBid").is_empty());
}

/// `retry-interval: R2/PT5M` without `max-retry`: two retries five minutes apart, then the
/// retry's `next-state`.
#[tokio::test(start_paused = true)]
async fn second_draft_declined_card_retries_then_cancels() {
    let workflow = AuctionWorkflow::new(House::new(u32::MAX));
    let io = Io::standalone();
    second_events(&io, "a1", bid(6000, "EUR"));
    let output = workflow.run_with(json!({}), &io).await.unwrap();
    let house = workflow.functions();
    assert_eq!(house.times_of("charge"), [120, 420, 720]);
    assert_eq!(house.times_of("notify"), [720]);
    assert_eq!(output["error"]["name"], json!("CardDeclined"));
    assert_eq!(output["notified"], json!(["cancelled"]));
}

/// First draft: a bid, then the close: both entries' conditions hold, the first one listed
/// decides; the sale ends in END states (SUCCESS) and outputs the branches' array.
#[tokio::test(start_paused = true)]
async fn first_draft_sells_to_a_bid_once_the_auction_closes() {
    let workflow = CarAuctionWorkflow::new(House::new(0));
    let io = Io::standalone();
    let offer = CarAuctionEvent::OfferMade.correlated("o1", "a1", bid(6000, "EUR"));
    deliver_after(&io, MINUTE, offer.unwrap());
    let closed = CarAuctionEvent::AuctionClosed.correlated("c1", "a1", json!({"closedAt": "noon"}));
    deliver_after(&io, 2 * MINUTE, closed.unwrap());
    let result = workflow.run_with(json!({}), &io).await;
    assert_eq!(ExecStatus::of(&result), ExecStatus::Success);
    let mut data = bid(6000, "EUR");
    data["closedAt"] = json!("noon");
    data["recorded"] = json!({"ok": true, "receipt": "R-1"});
    data["payment"] = json!({"id": "p1"});
    let mut paperwork = data.clone();
    paperwork["registered"] = json!(true);
    let mut transport = data;
    transport["shipped"] = json!(true);
    transport["notified"] = json!(["shipping"]);
    assert_eq!(result.unwrap(), json!([paperwork, transport]));
}

/// The auction closes without a bid: the second entry, then END `status: FAILURE` fails the run
/// with the data it had.
#[tokio::test(start_paused = true)]
async fn first_draft_unsold_ends_in_failure() {
    let workflow = CarAuctionWorkflow::new(House::new(0));
    let io = Io::standalone();
    let closed = CarAuctionEvent::AuctionClosed.correlated("c1", "a1", json!({"closedAt": "noon"}));
    deliver_after(&io, MINUTE, closed.unwrap());
    let result = workflow.run_with(json!({"lot": 7}), &io).await;
    assert_eq!(ExecStatus::of(&result), ExecStatus::Fail);
    let error = result.unwrap_err();
    assert_eq!(error.task(), "Failed");
    assert_eq!(error.error().name, "EndStateFailure");
    assert_eq!(
        error.data(),
        &json!({"lot": 7, "closedAt": "noon", "notified": ["unsold"]})
    );
    assert!(workflow.functions().times_of("recordBid").is_empty());
}

/// Nothing within `timeout: 7200` (seconds): unsold, a failure too.
#[tokio::test(start_paused = true)]
async fn first_draft_entry_timeout_in_seconds() {
    let workflow = CarAuctionWorkflow::new(House::new(0));
    let io = Io::standalone();
    let started = Instant::now();
    let error = workflow.run_with(json!({}), &io).await.unwrap_err();
    assert_eq!(started.elapsed(), Duration::from_secs(7200));
    assert_eq!(error.error().name, "EndStateFailure");
    assert_eq!(error.data(), &json!({"notified": ["unsold"]}));
}

/// `max-retry: 2`, `retry-interval: 300` (seconds): then the retry's `next-state`, which ends in
/// failure.
#[tokio::test(start_paused = true)]
async fn first_draft_declined_card_retries_then_fails() {
    let workflow = CarAuctionWorkflow::new(House::new(u32::MAX));
    let io = Io::standalone();
    let placed = CarAuctionEvent::BidPlaced.correlated("b1", "a1", bid(6000, "EUR"));
    deliver_after(&io, MINUTE, placed.unwrap());
    let closed = CarAuctionEvent::AuctionClosed.correlated("c1", "a1", json!({}));
    deliver_after(&io, 2 * MINUTE, closed.unwrap());
    let error = workflow.run_with(json!({}), &io).await.unwrap_err();
    assert_eq!(error.error().name, "EndStateFailure");
    assert_eq!(workflow.functions().times_of("charge"), [120, 420, 720]);
    assert_eq!(error.data()["error"]["name"], json!("CardDeclined"));
}
