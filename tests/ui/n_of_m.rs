swf_runtime::workflow!("../../../../tests/ui/n_of_m.sw.yaml");

fn main() {}
