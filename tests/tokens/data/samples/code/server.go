package main

import (
	"encoding/json"
	"log"
	"net/http"
	"sync"
)

type counterStore struct {
	mu     sync.Mutex
	counts map[string]int
}

func (s *counterStore) handle(w http.ResponseWriter, r *http.Request) {
	key := r.URL.Query().Get("key")
	if key == "" {
		http.Error(w, "missing key", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.counts[key]++
	n := s.counts[key]
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]int{key: n})
}

func main() {
	store := &counterStore{counts: make(map[string]int)}
	http.HandleFunc("/hit", store.handle)
	log.Fatal(http.ListenAndServe(":8080", nil))
}
