// Command bare is the baseline of bench/load.sh: a bare net/http JSON handler with the
// same routes as the two load cases, so that the server's throughput is read as a ratio
// to what net/http and encoding/json alone do on the same machine in the same run.
//
//	POST /api/v1/charge      decodes a small JSON body and answers a small JSON object
//	GET  /api/v1/charge/{id} answers a small JSON object
//
// It checks the Authorization header is present, as the server's routes need one, but
// stores nothing and verifies nothing: it is the ceiling of an HTTP JSON service here, not
// a service.
//
// With -durable FILE it is instead the floor of a create that keeps what it is sent, and of
// a read of what was kept (see durable.go): each POST is committed to a bbolt file, synced,
// before its answer, and each GET reads the record it finds by its correlationID there.
// With -keys as well, each POST commits every key the server's create commits (in
// store/bolt's shapes and sizes), not four: the floor of keeping what the server keeps.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"time"
)

type chargeRequest struct {
	CorrelationID string `json:"correlationID"`
	Value         int64  `json:"value"`
	Comment       string `json:"comment"`
}

type chargeReply struct {
	CorrelationID string `json:"correlationID"`
	Value         int64  `json:"value"`
	Status        string `json:"status"`
}

func main() {
	addr := flag.String("addr", "127.0.0.1:8081", "listen address")
	durableFile := flag.String("durable", "", "bbolt file: commit each create to it before answering (the floor of a durable create)")
	allKeys := flag.Bool("keys", false, "with -durable: commit every key the server's create writes, not four (durable_keys.go)")
	flag.Parse()
	var d *durable
	if *durableFile != "" {
		var err error
		if d, err = openDurable(*durableFile, *allKeys); err != nil {
			fmt.Fprintln(os.Stderr, "bare:", err)
			os.Exit(1)
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/v1/charge", func(w http.ResponseWriter, r *http.Request) {
		var req chargeRequest
		if r.Header.Get("Authorization") == "" {
			reply(w, http.StatusUnauthorized, map[string]string{"error": "appID inválido"})
			return
		}
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&req); err != nil {
			reply(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
			return
		}
		if d != nil {
			d.create(w, req)
			return
		}
		reply(w, http.StatusOK, chargeReply{CorrelationID: req.CorrelationID, Value: req.Value, Status: "ACTIVE"})
	})
	mux.HandleFunc("GET /api/v1/charge/{id}", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "" {
			reply(w, http.StatusUnauthorized, map[string]string{"error": "appID inválido"})
			return
		}
		if d != nil {
			d.get(w, r.PathValue("id"))
			return
		}
		reply(w, http.StatusOK, chargeReply{CorrelationID: r.PathValue("id"), Value: 1990, Status: "ACTIVE"})
	})
	srv := &http.Server{Addr: *addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	if err := srv.ListenAndServe(); err != nil {
		fmt.Fprintln(os.Stderr, "bare:", err)
		os.Exit(1)
	}
}

func reply(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}
