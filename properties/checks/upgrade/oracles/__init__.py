"""What an upgraded job's result must hold, restated from the model's rules (`frontier_harness.model.upgrade.switch`)."""
