swf_runtime::workflow!("ui/n_of_m.sw.yaml");

fn main() {}
