//! Events, waiting and concurrency: the draft's examples and every timeout, end to end.

mod greeting {
    swf_runtime::workflow!("workflows/events/greeting.sw.yaml");
}
mod patient {
    swf_runtime::workflow!("workflows/events/patient.sw.yaml");
}
mod approval {
    swf_runtime::workflow!("workflows/events/approval.sw.yaml");
}
mod together {
    swf_runtime::workflow!("workflows/events/together.sw.yaml");
}
mod orders {
    swf_runtime::workflow!("workflows/events/orders.sw.yaml");
}
mod fan_out {
    swf_runtime::workflow!("workflows/events/parallel.sw.yaml");
}
mod terminate {
    swf_runtime::workflow!("workflows/events/terminate.sw.yaml");
}
mod flows {
    swf_runtime::workflow!(
        "workflows/events/parent.sw.yaml",
        "workflows/events/child.sw.yaml"
    );
}
