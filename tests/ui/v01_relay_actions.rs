swf_runtime::workflow!("../../../../tests/ui/v01_relay_actions.sw.yaml");

fn main() {}
