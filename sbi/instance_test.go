package sbi_test

import (
	"regexp"
	"testing"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/sbi"
)

func TestInstanceIDIsAStableUUIDPerTypeAndAddress(t *testing.T) {
	a := sbi.InstanceID(models.NrfNfManagementNfType_UDM, "127.0.0.1:29503")
	if !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(a) {
		t.Fatalf("InstanceID = %q, want a version-5 UUID", a)
	}
	if b := sbi.InstanceID(models.NrfNfManagementNfType_UDM, "127.0.0.1:29503"); b != a {
		t.Fatalf("a restarted NF got another id: %s then %s", a, b)
	}
	if c := sbi.InstanceID(models.NrfNfManagementNfType_AUSF, "127.0.0.1:29503"); c == a {
		t.Fatal("two NF types share an instance id")
	}
}
