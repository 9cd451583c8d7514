//go:build tools

// Package l25gc pins the module's dependencies while the tree is being built.
package l25gc

import (
	_ "github.com/free5gc/aper"
	_ "github.com/free5gc/nas"
	_ "github.com/free5gc/ngap"
	_ "github.com/free5gc/openapi"
	_ "github.com/free5gc/pfcp"
	_ "github.com/free5gc/util/milenage"
	_ "github.com/ishidawataru/sctp"
	_ "github.com/pion/sctp"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/spf13/cobra"
	_ "go.mongodb.org/mongo-driver/mongo"
	_ "golang.org/x/crypto/curve25519"
	_ "golang.org/x/net/http2"
	_ "gopkg.in/yaml.v3"
)
