package pcf

// FlowDescription is the TS 29.512 FlowDescription the PCF makes of a
// stored filter (an IPFilterRule, or a data network address or prefix);
// `l25gc policy set` sends the SMF the same rules the PCF would.
func FlowDescription(filter string) (string, error) { return flowDescription(filter) }
