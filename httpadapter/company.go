package httpadapter

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"

	"github.com/pixfoundry/payments"
)

// addCompanyRoutes registers the company itself, closing its accounts and subaccounts,
// and the webhook source addresses. It panics on Options.WebhookIPs that CheckWebhookIPs
// refuses, as New does on a bad CORS list: a mistake in the configuration shows at start.
func addCompanyRoutes(k routeKit) {
	ips, err := webhookIPs(k.opts.WebhookIPs)
	if err != nil {
		panic("httpadapter: Options.WebhookIPs: " + err.Error())
	}
	k.api("GET /company", k.auth(handleCompanyGet(k.log)))
	k.api("DELETE /account/{accountId}", k.auth(handleAccountClose(k.log)))
	k.api("DELETE /subaccount/{id}", k.auth(handleSubaccountDelete(k.log)))
	k.api("GET /webhook/ips", k.auth(handleWebhookIPs(ips)))
}

// companyView is the company as the official document's GET /company gives it.
// officialName is the company's name, tradeName its merchant name (the name its BR Codes
// show), taxID its CNPJ or CPF, digits only, left out when the company has none (the
// default company may not). The company was not created with a correlationID of the
// caller's, so correlationID is this platform's id of it: stable, and unique on the
// platform (the id a partner's pre-registration answers as company.id).
type companyView struct {
	CorrelationID string `json:"correlationID"`
	OfficialName  string `json:"officialName"`
	TaxID         string `json:"taxID,omitempty"`
	TradeName     string `json:"tradeName"`
}

// companyReply is the reply of GET /company.
type companyReply struct {
	Company companyView `json:"company"`
}

// viewCompany is c in the document's shape.
func viewCompany(c payments.Company) companyView {
	v := companyView{CorrelationID: c.ID, OfficialName: c.Name, TradeName: c.MerchantName}
	if c.TaxID != nil {
		v.TaxID = c.TaxID.TaxID
	}
	return v
}

// handleCompanyGet: GET /company → 200 {company:{correlationID, officialName, taxID,
// tradeName}}: the company the App ID belongs to (see companyView).
func handleCompanyGet(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := company(r).GetCompany(r.Context())
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, http.StatusOK, companyReply{Company: viewCompany(c)})
	})
}

// webhookIPsReply is the reply of GET /webhook/ips.
type webhookIPsReply struct {
	IPs []string `json:"ips"`
}

// handleWebhookIPs: GET /webhook/ips → 200 {ips:[...]}: the addresses webhook deliveries
// leave from, as Options.WebhookIPs configures them (checked and in canonical form). None
// configured is {"ips":[]}, the document's shape with nothing in it: this server then
// promises no fixed addresses, and a receiver cannot filter by source.
func handleWebhookIPs(ips []string) http.Handler {
	body := webhookIPsReply{IPs: ips}
	if body.IPs == nil {
		body.IPs = []string{}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		encode(w, http.StatusOK, body)
	})
}

// CheckWebhookIPs reports whether ips is a valid Options.WebhookIPs: IPv4 or IPv6
// addresses (no port, prefix length or zone), each once. The error names the entry at
// fault.
func CheckWebhookIPs(ips []string) error {
	_, err := webhookIPs(ips)
	return err
}

// webhookIPs checks ips (see CheckWebhookIPs) and returns them in canonical form
// ("2001:db8::7" for "2001:DB8:0::7"), in the order given.
func webhookIPs(ips []string) ([]string, error) {
	out := make([]string, 0, len(ips))
	seen := make(map[netip.Addr]bool, len(ips))
	for _, s := range ips {
		addr, err := netip.ParseAddr(s)
		switch {
		case s == "":
			return nil, errors.New("an empty entry: name an address such as 203.0.113.7")
		case err != nil:
			return nil, fmt.Errorf("%q is not an IP address (IPv4 or IPv6, with no port or prefix length)", s)
		case addr.Zone() != "":
			return nil, fmt.Errorf("%q has a zone (%%%s): an address webhooks leave from is one receivers see, without it", s, addr.Zone())
		case seen[addr.Unmap()]:
			return nil, fmt.Errorf("%q is listed twice", s)
		}
		seen[addr.Unmap()] = true
		out = append(out, addr.Unmap().String())
	}
	return out, nil
}
