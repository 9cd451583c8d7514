package node

// InNetns runs f on an OS thread inside network namespace name (see
// inNetns). A socket f opens stays in that namespace, so a benchmark can
// send from the lab's data network (LabNetns) without a helper process.
func InNetns(name string, f func() error) error { return inNetns(name, f) }
