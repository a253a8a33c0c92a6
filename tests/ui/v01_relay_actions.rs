swf_runtime::workflow!("ui/v01_relay_actions.sw.yaml");

fn main() {}
