swf_runtime::workflow!("ui/out_of_scope.sw.yaml");

fn main() {}
