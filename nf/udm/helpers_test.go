package udm

import (
	"errors"
	"io"
	"log/slog"

	"github.com/l25gc/l25gc/security"
)

func asSynch(err error, sf **security.SynchFailure) bool { return errors.As(err, sf) }

func newTextLogger(w io.Writer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }
