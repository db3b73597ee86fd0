// Package env is the environment API that actors use: one Env drives one
// Chromium tab over the DevTools protocol (chromedp) through webenv's tasks
// or any MiniWoB-style page, with BrowserGym's action vocabulary.
//
// Reset(task) opens the task's page and starts a seeded episode the way the
// MiniWoB harnesses do (core.endEpisode(0); Math.seedrandom(seed);
// core.startEpisodeReal(); poll WOB_TASK_READY). Step(action) acts with real
// input events (mouse clicks at the element's centre, key events with key,
// code and windowsVirtualKeyCode, Input.insertText for fill), waits for the
// page to settle through a pluggable Settler, and observes: a PNG screenshot
// of the viewport (Emulation.setDeviceMetricsOverride), the URL, the
// instruction and the interactive elements, each with a bid that the env
// injects into the DOM as a `bid` attribute. Reward and done come from the
// page's MiniWoB globals; webenv pages add the rubric (WOB_REWARD_INFO).
//
// A malformed or impossible action is not an error of Step: it comes back in
// Info.Error, and the episode goes on.
package env
