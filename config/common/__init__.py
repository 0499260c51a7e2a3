"""The values every settings module reads: their kinds, their errors, paths, origins and
secrets, below the features' settings and the settings that gather them."""
